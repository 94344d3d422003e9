import { isRefusedRowError, refusalReason } from './retry';

describe(isRefusedRowError.name, () => {
  it.each([
    [{ errno: 1062, sqlState: '23000' }, true],
    [{ driverError: { errno: 4025, sqlState: '23000', sqlMessage: 'CONSTRAINT `c` failed' } }, true],
    [{ errno: 1366, sqlState: 'HY000' }, true],
    [{ errno: 1406, sqlState: '22001' }, true],
    [{ errno: 1213, sqlState: '40001', code: 'ER_LOCK_DEADLOCK' }, false],
    [{ code: 'ECONNRESET' }, false],
    [{ errno: 1064, sqlState: '42000' }, false],
    [new Error('Pool is closed'), false],
  ])('classifies %j as %s', (error, refused) => {
    expect(isRefusedRowError(error)).toBe(refused);
  });

  it("words the refusal with the server's message, not the statement", () => {
    expect(refusalReason({ driverError: { sqlMessage: 'CONSTRAINT `c` failed', message: 'INSERT …' } })).toBe(
      'CONSTRAINT `c` failed',
    );
  });
});
