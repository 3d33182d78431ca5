import { IsNotEmpty, IsString, Matches } from 'class-validator';

export class LoginDto {
  @IsString()
  @IsNotEmpty()
  username!: string;

  @IsString()
  @IsNotEmpty()
  password!: string;
}

export class ReportDto {
  @Matches(/^\d{4}-\d{2}$/, { message: 'month must look like 2024-01' })
  month!: string;
}
