import { IsNumber } from 'class-validator';

export class AddDto {
  @IsNumber()
  a!: number;

  @IsNumber()
  b!: number;
}

export class SumResult {
  @IsNumber()
  sum!: number;
}
