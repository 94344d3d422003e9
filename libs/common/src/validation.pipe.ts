import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { InvalidParametersException, ParameterError } from './problem';

/** How a 400 names a query parameter sent without a name (`?=1`). */
export const UNNAMED_PARAMETER = '(unnamed)';

function flatten(errors: ValidationError[], parent = ''): ParameterError[] {
  return errors.flatMap((e) => {
    const property = e.property === '' ? UNNAMED_PARAMETER : e.property;
    const parameter = parent ? `${parent}.${property}` : property;
    const own = Object.entries(e.constraints ?? {}).map(([rule, message]) => ({
      parameter,
      message: rule === 'whitelistValidation' ? `${parameter} is not a known parameter` : message,
    }));
    return [...own, ...flatten(e.children ?? [], parameter)];
  });
}

/**
 * The global validation pipe: whitelist, forbid unknown parameters, transform into DTOs, and
 * answer a problem+json 400 naming every offending parameter. A parameter given twice is
 * refused before validation: `?limit=1&limit=2` is almost always a client bug.
 */
@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new InvalidParametersException(dedupe(flatten(errors))),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'query' && value && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>);
      const repeated = entries
        .filter(([, v]) => typeof v !== 'string')
        .map(([name]) => ({
          parameter: name === '' ? UNNAMED_PARAMETER : name,
          message: `${name === '' ? UNNAMED_PARAMETER : name} must be given once, as a single value`,
        }));
      // class-validator's whitelist looks names up in a plain object, so `toString` or
      // `__proto__` count as declared; no DTO declares a name of Object.prototype.
      const inherited = entries
        .filter(([name]) => name in Object.prototype)
        .map(([name]) => ({ parameter: name, message: `${name} is not a known parameter` }));
      const errors = dedupe([...inherited, ...repeated]);
      if (errors.length > 0) throw new InvalidParametersException(errors);
    }
    return super.transform(value, metadata);
  }
}

/** class-validator reports one message per failed rule; keep the first per parameter. */
function dedupe(errors: ParameterError[]): ParameterError[] {
  const seen = new Set<string>();
  return errors.filter((e) => (seen.has(e.parameter) ? false : (seen.add(e.parameter), true)));
}
