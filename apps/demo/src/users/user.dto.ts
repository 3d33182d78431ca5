import { Type } from 'class-transformer';
import { IsDefined, IsEmail, IsInt, IsOptional, IsString, Length, Min, ValidateNested } from 'class-validator';

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

  // @ValidateNested alone lets a missing address through (and the schema says so): require it.
  @IsDefined()
  @ValidateNested()
  @Type(() => AddressDto)
  address!: AddressDto;
}

export class UpdatedUserResult {
  @IsInt()
  id!: number;

  @IsEmail()
  email!: string;

  @IsString()
  city!: string;

  /** `X-Request-Id` of the call. */
  @IsString()
  requestId!: string;
}
