import { ClientGoneError, ReportSession, Semaphore } from './report-session';

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Semaphore', () => {
  it('grants at most `size` permits and the next one when a holder releases', async () => {
    const s = new Semaphore(2);
    const a = await s.acquire();
    await s.acquire();
    let third = false;
    void s.acquire().then(() => (third = true));
    await settle();
    expect(third).toBe(false);
    expect(s.waiting).toBe(1);
    a();
    await settle();
    expect(third).toBe(true);
    expect(s.holders).toBe(2);
  });

  it('serves waiters by priority, and in arrival order among equal priorities', async () => {
    const s = new Semaphore(1);
    const first = await s.acquire(undefined, 0);
    const served: string[] = [];
    const wait = (name: string, priority: number) =>
      s.acquire(undefined, priority).then((release) => {
        served.push(name);
        release();
      });
    const all = Promise.all([
      wait('p5-a', 5),
      wait('p2-a', 2),
      wait('p5-b', 5),
      wait('p2-b', 2),
      wait('p9', 9),
    ]);
    first();
    await all;
    expect(served).toEqual(['p2-a', 'p2-b', 'p5-a', 'p5-b', 'p9']);
    expect(s.idle).toBe(true);
  });

  it('drops a waiter whose signal aborts, and serves the next one', async () => {
    const s = new Semaphore(1);
    const held = await s.acquire();
    const gone = new AbortController();
    const abandoned = s.acquire(gone.signal, 0);
    const next = s.acquire(undefined, 1);
    gone.abort();
    await expect(abandoned).rejects.toBeInstanceOf(ClientGoneError);
    expect(s.waiting).toBe(1);
    held();
    const release = await next;
    release();
    expect(s.idle).toBe(true);
  });
});

describe('ReportSession', () => {
  it('waits for its permits before later sessions, whichever asked first', async () => {
    const shared = new Semaphore(1);
    const early = new ReportSession([shared], () => undefined, 1);
    const late = new ReportSession([shared], () => undefined, 2);
    const holding = await early.connectionPermit();
    const order: string[] = [];
    // The later request asks first (its first stage); the earlier one's next stage asks after it.
    const lateStage = late.connectionPermit().then((release) => {
      order.push('late');
      release();
    });
    const earlyNextStage = early.connectionPermit().then((release) => {
      order.push('early');
      release();
    });
    holding();
    await Promise.all([lateStage, earlyNextStage]);
    expect(order).toEqual(['early', 'late']);
  });
});
