import { openedConnection, PooledConnection, SESSION_SETTINGS } from './mysql-driver';

type Callback = (error: (Error & { code?: string }) | null, ...results: unknown[]) => void;

/** A connection as the pool hands it over: records its statements; the test answers them. */
function fakeConnection() {
  const sent: Array<{ statement: unknown; callback: Callback }> = [];
  const connection: PooledConnection & { destroyed: boolean; streamDestroyed: boolean } = {
    destroyed: false,
    streamDestroyed: false,
    query(statement: unknown, callback: Callback) {
      sent.push({ statement, callback });
    },
    destroy() {
      this.destroyed = true;
    },
    stream: {
      destroy() {
        connection.streamDestroyed = true;
      },
    },
  } as PooledConnection & { destroyed: boolean; streamDestroyed: boolean };
  return { connection, sent };
}

const timeoutError = () =>
  Object.assign(new Error('Query inactivity timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' });

describe('openedConnection', () => {
  it("queues the session settings ahead of a CLI connection's first statement", () => {
    const { connection, sent } = fakeConnection();
    openedConnection(connection, { sessionSettings: true });
    connection.query('SELECT 1', () => undefined);
    expect(sent.map((s) => s.statement)).toEqual([SESSION_SETTINGS, 'SELECT 1']);
    // Refused or not, the setting's answer goes nowhere: the connection stays as it is.
    sent[0].callback(new Error('Unknown system variable'));
    expect(connection.destroyed).toBe(false);
  });

  it("queues nothing ahead of an API connection's statement, whose timer would not start behind it", () => {
    const { connection, sent } = fakeConnection();
    openedConnection(connection, { statementTimeoutMs: 11_000 });
    connection.query('SELECT 1', () => undefined);
    expect(sent.map((s) => s.statement)).toEqual(['SELECT 1']);
  });

  it('drops an API connection whose statement ran into the client-side timeout, and only then', () => {
    const { connection, sent } = fakeConnection();
    openedConnection(connection, { statementTimeoutMs: 11_000 });
    const answers: unknown[] = [];
    connection.query('SELECT 1', (error: unknown) => answers.push(error));
    sent[0].callback(Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY' }));
    expect(connection.destroyed).toBe(false);

    connection.query('SELECT SLEEP(60)', (error: unknown) => answers.push(error));
    sent[1].callback(timeoutError());
    expect(connection.destroyed).toBe(true);
    expect(connection.streamDestroyed).toBe(true);
    // The caller still gets its error.
    expect(answers.map((e) => (e as { code: string }).code)).toEqual([
      'ER_DUP_ENTRY',
      'PROTOCOL_SEQUENCE_TIMEOUT',
    ]);
  });

  it('leaves a CLI connection whose statement timed out to its caller', () => {
    const { connection, sent } = fakeConnection();
    openedConnection(connection, { sessionSettings: true });
    connection.query('SELECT 1', () => undefined);
    sent[1].callback(timeoutError());
    expect(connection.destroyed).toBe(false);
  });
});
