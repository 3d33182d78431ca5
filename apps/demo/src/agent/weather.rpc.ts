import { Injectable } from '@nestjs/common';
import { RpcMethod, RpcParams } from '@nest-jsonrpc/server';
import { WeatherDto, WeatherResult } from './agent.dto.js';

const CONDITIONS = ['sunny', 'cloudy', 'rainy', 'windy', 'foggy'] as const;

/** The agent's public tool: made-up weather, the same for a city every time (no network). */
@Injectable()
export class WeatherRpc {
  @RpcMethod('weather.get', {
    summary: 'Current weather of a city',
    description: 'Temperature in °C and conditions (demo data, no network).',
    tags: ['agent'],
    result: WeatherResult,
  })
  get(@RpcParams() p: WeatherDto) {
    let hash = 0;
    for (const char of p.city.toLowerCase()) hash = (hash * 31 + char.codePointAt(0)!) >>> 0;
    return { city: p.city, temperatureC: 8 + (hash % 22), conditions: CONDITIONS[hash % CONDITIONS.length] };
  }
}
