import { Type } from 'class-transformer';
import { IsEmail, IsInt, IsOptional, IsString, Length, Min, ValidateNested } from 'class-validator';

export class AddressDto {
  @IsString()
  @Length(1, 100)
  city!: string;

  @IsString()
  @IsOptional()
  street?: string;
}

export class UpdateUserDto {
  @IsInt()
  @Min(1)
  id!: number;

  @IsEmail()
  email!: string;

  @ValidateNested()
  @Type(() => AddressDto)
  address!: AddressDto;
}
