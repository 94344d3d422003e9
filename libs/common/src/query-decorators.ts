import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min, ValidationArguments } from 'class-validator';

/**
 * Only plain decimal digits become numbers: `1e3`, `0x10`, ` 5` and `5.0` stay strings and
 * fail validation instead of being read as something the client did not write.
 */
export const toStrictInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value;

export interface QueryIntOptions {
  min: number;
  max: number;
  default: number;
  description: string;
}

/** An optional integer query parameter with its range and default, validated and documented at once. */
export function QueryInt(o: QueryIntOptions): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: o.min,
      maximum: o.max,
      default: o.default,
      description: o.description,
    }),
    IsOptional(),
    Transform(toStrictInt),
    IsInt({ message: ({ property }) => `${property} must be an integer` }),
    Min(o.min, { message: ({ property }) => `${property} must be at least ${o.min}` }),
    Max(o.max, { message: ({ property }) => `${property} must be at most ${o.max}` }),
  );
}

/**
 * A validation message that tells a missing required parameter (`metric is required: one of
 * …`) from a wrong one (`metric must be one of: …`).
 */
export function requiredOr(required: string, invalid: string): (args: ValidationArguments) => string {
  return (args) => (args.value === undefined ? required : invalid);
}

/** The message of a required parameter taking one of `values`. */
export function oneOf(name: string, values: readonly string[]): (args: ValidationArguments) => string {
  const list = values.join(', ');
  return requiredOr(`${name} is required: one of ${list}`, `${name} must be one of: ${list}`);
}
