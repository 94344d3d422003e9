import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  HttpStatus,
  Injectable,
  NestInterceptor,
  NotAcceptableException,
  SetMetadata,
  Type,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExtraModels, ApiOkResponse, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { CsvTable, toCsv } from './csv';
import { problem } from './problem';

const CSV_EXPORT = 'csv:export';

export interface CsvExportOptions<T> {
  /** The JSON response type, documented next to the CSV form. */
  type: Type<T>;
  /** First part of the download's file name, e.g. `overview`. */
  filename: string;
  /** The rows of the report: one flat record per row, columns in order. */
  table: (body: T) => CsvTable;
  /** A short CSV sample for the documentation. */
  example: string;
}

/**
 * Declares that a route can answer `text/csv` (RFC 4180, with a header row and a
 * Content-Disposition file name) when asked with `Accept: text/csv` or `format=csv`, and
 * documents both media types of its 200 response. JSON stays the default.
 */
export function CsvExport<T>(options: CsvExportOptions<T>): MethodDecorator {
  return applyDecorators(
    SetMetadata(CSV_EXPORT, options),
    ApiExtraModels(options.type),
    ApiOkResponse({
      description: 'The report as JSON (default), or as CSV with `Accept: text/csv` or `format=csv`',
      content: {
        'application/json': { schema: { $ref: getSchemaPath(options.type) } },
        'text/csv': { schema: { type: 'string' }, example: options.example },
      },
    }),
  );
}

/** Whether the request asks for CSV: `format=csv`, or an Accept header preferring text/csv to JSON. */
export function wantsCsv(req: Request): boolean {
  const format = (req.query as Record<string, unknown> | undefined)?.format;
  if (format !== undefined) return format === 'csv';
  const accept = req.headers.accept;
  if (!accept || !/text\/csv/i.test(accept)) return false;
  return req.accepts(['application/json', 'text/csv']) === 'text/csv';
}

@Injectable()
export class CsvInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    if (!wantsCsv(req)) return next.handle();
    const options = this.reflector.get<CsvExportOptions<unknown> | undefined>(
      CSV_EXPORT,
      context.getHandler(),
    );
    if (!options) {
      throw new NotAcceptableException(
        problem(HttpStatus.NOT_ACCEPTABLE, 'This resource has no CSV form; ask for application/json.'),
      );
    }
    const res = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((body: unknown) => {
        res.setHeader('Content-Type', 'text/csv; charset=utf-8');
        res.setHeader('Content-Disposition', `attachment; filename="${fileName(options.filename, body)}"`);
        return toCsv(options.table(body));
      }),
    );
  }
}

function fileName(base: string, body: unknown): string {
  const meta = (body as { meta?: Record<string, unknown> } | undefined)?.meta ?? {};
  const parts = [base];
  if (typeof meta.site_id === 'number') parts.push(`site-${meta.site_id}`);
  if (typeof meta.from === 'string' && typeof meta.to === 'string') parts.push(`${meta.from}_${meta.to}`);
  return `${parts.join('_')}.csv`.replace(/[^A-Za-z0-9_.-]/g, '-');
}
