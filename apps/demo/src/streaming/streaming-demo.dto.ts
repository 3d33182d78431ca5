import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class ChatDto {
  @IsString()
  @MaxLength(2000)
  prompt!: string;

  /** Milliseconds between tokens (simulated model latency). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2000)
  delayMs?: number;
}

export class LogsTailDto {
  /** Milliseconds between log lines. */
  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(60_000)
  intervalMs?: number;
}

export class ExportDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  steps?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(5000)
  stepMs?: number;
}

export class DownloadDto {
  /** Size of the generated file in bytes (up to 16 MiB). */
  @IsInt()
  @Min(0)
  @Max(16 * 1024 * 1024)
  size!: number;

  @IsOptional()
  @IsInt()
  @Min(3)
  @Max(1024 * 1024)
  chunkSize?: number;
}
