import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class AgentAskDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  question!: string;

  /** Milliseconds between the offline model's words (ignored by real providers). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2000)
  delayMs?: number;
}

export class WeatherDto {
  /** A city name, e.g. "Porto". */
  @IsString()
  @IsNotEmpty()
  @MaxLength(80)
  city!: string;
}

export class WeatherResult {
  @IsString()
  city!: string;

  @IsInt()
  temperatureC!: number;

  @IsIn(['sunny', 'cloudy', 'rainy', 'windy', 'foggy'])
  conditions!: string;
}
