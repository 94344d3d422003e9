import { mariadbDialect, mysqlDialect } from './dialect';
import {
  isDatabaseUnavailableError,
  isMissingSchemaError,
  isRefusedRowError,
  isTransientLockError,
  refusalReason,
} from './driver-errors';

const driver = (fields: Record<string, unknown>, message = 'driver error') =>
  Object.assign(new Error(message), fields);
/** TypeORM wraps driver errors in a QueryFailedError that keeps the original as driverError. */
const wrapped = (inner: Error) => Object.assign(new Error(inner.message), { driverError: inner });

describe(isDatabaseUnavailableError.name, () => {
  it.each([
    ['refused', driver({ code: 'ECONNREFUSED' })],
    ['connect timeout', driver({ code: 'ETIMEDOUT' }, 'connect ETIMEDOUT')],
    ['server shutting down', wrapped(driver({ code: 'ER_SERVER_SHUTDOWN', errno: 1053 }))],
    ['lost connection', wrapped(driver({ code: 'PROTOCOL_CONNECTION_LOST', fatal: true }))],
    ['client-side statement timeout', wrapped(driver({ code: 'PROTOCOL_SEQUENCE_TIMEOUT' }))],
    ['pool queue full', new Error('Queue limit reached.')],
    ['pool closed', new Error('Pool is closed.')],
    [
      'not connected yet (booted without a database)',
      new Error('Connection is not established with mysql database'),
    ],
    [
      'closed connection',
      driver({ fatal: true }, "Can't add new command when connection is in closed state"),
    ],
  ])('is true for %s', (_, error) => {
    expect(isDatabaseUnavailableError(error)).toBe(true);
  });

  it.each([
    ['a syntax error', wrapped(driver({ code: 'ER_PARSE_ERROR', errno: 1064 }))],
    [
      'a missing grant (a misconfiguration, not an outage)',
      wrapped(driver({ code: 'ER_TABLEACCESS_DENIED_ERROR' })),
    ],
    ['a plain bug', new TypeError('x is undefined')],
    ['not an error', 'boom'],
  ])('is false for %s', (_, error) => {
    expect(isDatabaseUnavailableError(error)).toBe(false);
  });
});

describe.each([mariadbDialect, mysqlDialect])('isTimeBudgetError of the $name dialect', (dialect) => {
  it('recognises MariaDB max_statement_time and MySQL max_execution_time', () => {
    expect(dialect.isTimeBudgetError(wrapped(driver({ errno: 1969 })))).toBe(true);
    expect(dialect.isTimeBudgetError(wrapped(driver({ errno: 3024 })))).toBe(true);
    expect(dialect.isTimeBudgetError(wrapped(driver({ errno: 1064 })))).toBe(false);
  });
});

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

describe(isTransientLockError.name, () => {
  it.each([
    [{ errno: 1213, sqlState: '40001', code: 'ER_LOCK_DEADLOCK' }, true],
    [{ driverError: { code: 'ER_LOCK_WAIT_TIMEOUT' } }, true],
    [{ errno: 1062, sqlState: '23000', code: 'ER_DUP_ENTRY' }, false],
    [new Error('Pool is closed'), false],
  ])('classifies %j as %s', (error, transient) => {
    expect(isTransientLockError(error)).toBe(transient);
  });
});

describe(isMissingSchemaError.name, () => {
  it.each([
    [wrapped(driver({ errno: 1146, code: 'ER_NO_SUCH_TABLE' }, "Table 'stats.users' doesn't exist")), true],
    [driver({ errno: 1049, code: 'ER_BAD_DB_ERROR' }, "Unknown database 'stats'"), true],
    [wrapped(driver({ code: 'SQLITE_ERROR' }, 'no such table: users')), true],
    [new Error('SqliteError: no such table: dirty_sessions'), true],
    [driver({ code: 'SQLITE_ERROR' }, 'no such column: x'), false],
    [driver({ errno: 1054, code: 'ER_BAD_FIELD_ERROR' }, "Unknown column 'x'"), false],
    [driver({ code: 'ECONNREFUSED' }), false],
  ])('classifies %s as %s', (error, missing) => {
    expect(isMissingSchemaError(error)).toBe(missing);
  });
});
