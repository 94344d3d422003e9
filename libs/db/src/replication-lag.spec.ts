import { mariadbDialect, mysqlDialect, positionCovers } from './dialect';
import { ReplicationLag } from './replication-lag';

const pos = (text: string) => mariadbDialect.parseReplicationPosition(text);

describe('replication positions', () => {
  it('reads MariaDB GTID positions per domain and MySQL GTID sets per source', () => {
    expect([...pos('0-1-42,1-2-7')]).toEqual([
      ['0', 42],
      ['1', 7],
    ]);
    expect([...pos('')]).toEqual([]);
    expect([
      ...mysqlDialect.parseReplicationPosition('3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:11-18,\nabc:1'),
    ]).toEqual([
      ['3e11fa47-71ca-11e1-9e33-c80aa9429562', 18],
      ['abc', 1],
    ]);
  });

  it('says a replica covers the primary when it applied as much in every stream', () => {
    expect(positionCovers(pos('0-1-42'), pos('0-1-42'))).toBe(true);
    expect(positionCovers(pos('0-1-43,1-2-1'), pos('0-1-42'))).toBe(true);
    expect(positionCovers(pos('0-1-41'), pos('0-1-42'))).toBe(false);
    expect(positionCovers(pos('0-1-42'), pos('0-1-42,1-2-1'))).toBe(false);
  });
});

describe(ReplicationLag.name, () => {
  it('is 0 for a replica at the last position seen, and the time since the first position it lacks otherwise', () => {
    const sut = new ReplicationLag(60_000);
    sut.recordPrimary(pos('0-1-10'), 1_000);
    sut.recordPrimary(pos('0-1-10'), 2_000);
    sut.recordPrimary(pos('0-1-11'), 3_000);
    sut.recordPrimary(pos('0-1-15'), 4_000);
    expect(sut.lagSeconds(pos('0-1-15'), 9_000)).toBe(0);
    expect(sut.lagSeconds(pos('0-1-12'), 9_000)).toBe(5);
    expect(sut.lagSeconds(pos('0-1-10'), 9_000)).toBe(6);
  });

  it('does not know the lag of a replica behind the first position it saw', () => {
    const sut = new ReplicationLag(60_000);
    sut.recordPrimary(pos('0-1-10'), 1_000);
    expect(sut.lagSeconds(pos('0-1-9'), 2_000)).toBeNull();
    expect(sut.lagSeconds(pos('0-1-10'), 2_000)).toBe(0);
  });

  it('forgets positions older than it needs, still measuring a replica behind them as far behind', () => {
    const sut = new ReplicationLag(10_000);
    for (let t = 0; t <= 60; t++) sut.recordPrimary(pos(`0-1-${t + 1}`), t * 1_000);
    expect(sut.lagSeconds(pos('0-1-1'), 60_000)).toBeGreaterThan(10);
    expect(sut.lagSeconds(pos('0-1-61'), 60_000)).toBe(0);
  });
});
