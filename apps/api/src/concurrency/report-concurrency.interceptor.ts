import type { AuthenticatedRequest } from '@app/auth';
import { TooManyRequestsProblem } from '@app/common';
import { reportSessions } from '@app/stats';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { finalize, Observable } from 'rxjs';
import { ReportConcurrency } from './report-concurrency';

/**
 * Admits an authenticated request under its key's and site's concurrency caps, or answers 429
 * with `Retry-After: 1` and a problem body saying which cap (a different cause from the rate
 * limit). The handler runs inside the request's ReportSession (AsyncLocalStorage), which
 * ReportDb reads; when the client closes the connection before the answer, the session stops
 * the request's running statements.
 */
@Injectable()
export class ReportConcurrencyInterceptor implements NestInterceptor {
  constructor(private readonly concurrency: ReportConcurrency) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (!req.principal) return next.handle();
    const admission = this.concurrency.enter(req.principal.keyId, req.site?.id);
    if (!admission.admitted)
      throw new TooManyRequestsProblem(admission.detail, 1, {}, { instance: req.path });

    const res = context.switchToHttp().getResponse<Response>();
    const { session, leave } = admission;
    const onClose = () => {
      if (!res.writableFinished) session.abort();
    };
    res.once('close', onClose);
    // handle() binds the handler to the async context it is called in: the session's.
    return reportSessions
      .run(session, () => next.handle())
      .pipe(
        finalize(() => {
          res.off('close', onClose);
          leave();
        }),
      );
  }
}
