import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export class GenerateReportDto {
  /** Progress steps (default 20). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  steps?: number;

  /** Milliseconds per step (default 500). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10_000)
  delayMs?: number;
}

/** The one row (a `chunk` event) after the `progress` events. */
export class ReportRow {
  @IsString()
  report!: string;

  @IsInt()
  pages!: number;
}
