import { IsArray, IsInt, IsISO8601, IsNotEmpty, IsNumber, IsString, IsUUID, Matches } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

export class LoginDto {
  @IsString()
  @IsNotEmpty()
  username!: string;

  /** `writeOnly`: the explorer masks the input (a value sent, never shown back). */
  @IsString()
  @IsNotEmpty()
  @JSONSchema({ writeOnly: true })
  password!: string;
}

export class ReportDto {
  @Matches(/^\d{4}-\d{2}$/, { message: 'month must look like 2024-01' })
  month!: string;
}

export class TokenResult {
  /** Send it as `Authorization: Bearer <token>`. */
  @IsUUID()
  token!: string;
}

export class MeResult {
  @IsString()
  id!: string;

  @IsArray()
  @IsString({ each: true })
  roles!: string[];
}

export class StatsResult {
  @IsInt()
  uptimeSeconds!: number;

  @IsInt()
  reportRuns!: number;
}

export class MonthlyReportResult {
  @Matches(/^\d{4}-\d{2}$/)
  month!: string;

  @IsNumber()
  total!: number;

  @IsISO8601()
  generatedAt!: string;

  /** How many times the report was computed (a cached answer repeats it). */
  @IsInt()
  run!: number;
}
