import {
  ApiKey,
  dataVersionColumns,
  DataVersionRow,
  EmbeddedKeyUse,
  formatDataVersion,
  Membership,
  preparedRead,
  readsPrepared,
  Site,
} from '@app/db';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import DataLoader from 'dataloader';
import { DataSource, IsNull, LessThan, Repository } from 'typeorm';

/** What the guards need of a key. */
export type KeyRow = Pick<ApiKey, 'id' | 'userId' | 'expiresAt' | 'revokedAt'>;

/** A site looked up with the key: the site (null: no such site), membership and data version. */
export interface SiteLookup {
  id: number;
  site: Site | null;
  /** Whether the key's user is a member of the site, right now. */
  member: boolean;
  /** The site's data version (dataVersionColumns), read in the same statement. */
  dataVersion: string;
}

export interface FoundKey extends KeyRow {
  /** When a site id was given. */
  siteLookup?: SiteLookup;
}

type LookupRow = Record<string, unknown> & DataVersionRow & { member: unknown };

/** Key and site lookups of concurrent requests read in one statement, at most this many. */
const MAX_LOOKUPS_PER_STATEMENT = 16;

const KEY_COLUMNS = ['id', 'userId', 'expiresAt', 'revokedAt'] as const;
const SITE_COLUMNS = ['id', 'name', 'domain', 'timezone', 'currency', 'trackingMode', 'createdAt'] as const;

/** Persistence of what the guards need: keys by hash, sites, memberships. */
@Injectable()
export class AccessRepository {
  private statements?: { key: string; keyAndSite: string };
  /** The statements reading n lookups at once (UNION ALL of keyAndSite), by n. */
  private readonly batchStatements: string[] = [];

  /**
   * The key and site lookups of requests that arrive together (in one turn of the event loop:
   * setImmediate), read in one statement: one round trip and one statement's client-side work
   * for all of them instead of one each. Each request still has its own row, read by a statement
   * sent after it arrived (DataLoader's memoizing cache is off, and no two requests share a
   * row), so a revoked key or removed membership and new data count from the next request on,
   * as before. Only where every read goes to the one pool (readsPrepared): with replicas each
   * request's first read picks its own server (its read pin), so lookups are not shared.
   */
  private readonly siteLookups = new DataLoader<readonly [keyHash: string, siteId: number], LookupRow | null>(
    (lookups) => this.readSiteLookups(lookups),
    { cache: false, maxBatchSize: MAX_LOOKUPS_PER_STATEMENT, batchScheduleFn: (run) => setImmediate(run) },
  );

  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    @InjectRepository(Site) private readonly sites: Repository<Site>,
    @InjectRepository(Membership) private readonly memberships: Repository<Membership>,
    @InjectDataSource() private readonly ds: DataSource,
    @Optional() @Inject(EmbeddedKeyUse) private readonly embeddedKeyUse?: EmbeddedKeyUse | null,
  ) {}

  /**
   * The key with this hash and, given a site id, that site, whether the key's user is a member
   * and the site's data version: one statement, so that a request answered from the report
   * cache costs one round trip to the database.
   */
  async findKey(keyHash: string, siteId?: number): Promise<FoundKey | null> {
    const statements = (this.statements ??= this.lookupStatements());
    if (siteId === undefined) {
      const rows = await this.read<Record<string, unknown>>(statements.key, [keyHash]);
      return rows.length ? this.hydrate(ApiKey, KEY_COLUMNS, rows[0], 'k_') : null;
    }
    const row = readsPrepared(this.ds)
      ? await this.siteLookups.load([keyHash, siteId])
      : ((await this.read<LookupRow>(statements.keyAndSite, [siteId, keyHash]))[0] ?? null);
    if (!row) return null;
    const site =
      row.s_id === null || row.s_id === undefined ? null : this.hydrate(Site, SITE_COLUMNS, row, 's_');
    return {
      ...this.hydrate(ApiKey, KEY_COLUMNS, row, 'k_'),
      siteLookup: {
        id: siteId,
        site: site && Object.assign(new Site(), site),
        member: site !== null && Number(row.member) === 1,
        dataVersion: formatDataVersion(row),
      },
    };
  }

  /** The rows of these lookups, in their order (null: no such key), one statement for all. */
  private async readSiteLookups(
    lookups: readonly (readonly [keyHash: string, siteId: number])[],
  ): Promise<(LookupRow | null)[]> {
    const { keyAndSite } = (this.statements ??= this.lookupStatements());
    if (lookups.length === 1) {
      const [keyHash, siteId] = lookups[0];
      return [(await this.read<LookupRow>(keyAndSite, [siteId, keyHash]))[0] ?? null];
    }
    const rows = await this.read<LookupRow & { n: unknown }>(
      (this.batchStatements[lookups.length] ??= batchOf(keyAndSite, lookups.length)),
      lookups.flatMap(([keyHash, siteId]) => [siteId, keyHash]),
    );
    const found: (LookupRow | null)[] = lookups.map(() => null);
    for (const row of rows) found[Number(row.n)] = row;
    return found;
  }

  /** The two statements of findKey: their text depends only on the entities' metadata. */
  private lookupStatements(): { key: string; keyAndSite: string } {
    const keyColumns = this.columns(ApiKey, KEY_COLUMNS, 'k', 'k_');
    return {
      key: `SELECT ${keyColumns} FROM api_keys k WHERE k.key_hash = ?`,
      keyAndSite: `SELECT ${keyColumns}, ${this.columns(Site, SITE_COLUMNS, 's', 's_')},
         EXISTS (SELECT 1 FROM memberships m WHERE m.site_id = s.id AND m.user_id = k.user_id) AS member,
         ${dataVersionColumns('s.id')}
       FROM api_keys k LEFT JOIN sites s ON s.id = ?
       WHERE k.key_hash = ?`,
    };
  }

  /** Writes last_used_at unless a newer write already happened (another process may race). */
  async touchKey(id: number, now: Date, notBefore: Date): Promise<void> {
    // The embedded engine's API connection is read-only: this one write has its own handle.
    if (this.embeddedKeyUse) return this.embeddedKeyUse.record(id, now, notBefore);
    await this.keys.update(
      [
        { id, lastUsedAt: IsNull() },
        { id, lastUsedAt: LessThan(notBefore) },
      ],
      {
        lastUsedAt: now,
      },
    );
  }

  findSite(id: number): Promise<Site | null> {
    return this.sites.findOne({ where: { id } });
  }

  async isMember(siteId: number, userId: number): Promise<boolean> {
    return (await this.memberships.count({ where: { siteId, userId } })) > 0;
  }

  /**
   * A read where TypeORM's finds read (with replicas: a replica, as before), on a query runner
   * of its own; without replicas as a prepared statement (preparedRead).
   */
  private async read<Row>(statement: string, params: unknown[]): Promise<Row[]> {
    const runner = this.ds.createQueryRunner(this.ds.defaultReplicationModeForReads());
    try {
      if (readsPrepared(this.ds)) return await preparedRead<Row>(runner, statement, params);
      return (await runner.query(statement, params)) as Row[];
    } finally {
      await runner.release();
    }
  }

  /** `alias.column AS prefix_property` for the entity's `properties`. */
  private columns<E>(
    entity: new () => E,
    properties: readonly (keyof E & string)[],
    alias: string,
    prefix: string,
  ): string {
    const metadata = this.ds.getMetadata(entity);
    return properties
      .map((p) => `${alias}.${metadata.findColumnWithPropertyName(p)!.databaseName} AS ${prefix}${p}`)
      .join(', ');
  }

  /** The entity's `properties` from a raw row, converted as TypeORM converts them for this driver. */
  private hydrate<E, P extends keyof E & string>(
    entity: new () => E,
    properties: readonly P[],
    row: Record<string, unknown>,
    prefix: string,
  ): Pick<E, P> {
    const metadata = this.ds.getMetadata(entity);
    return Object.fromEntries(
      properties.map((p) => [
        p,
        this.ds.driver.prepareHydratedValue(row[`${prefix}${p}`], metadata.findColumnWithPropertyName(p)!),
      ]),
    ) as Pick<E, P>;
  }
}

/** `n` copies of a `SELECT …` statement in one, each row numbered by its copy (column `n`). */
function batchOf(statement: string, n: number): string {
  const body = statement.replace(/^SELECT /, '');
  return Array.from({ length: n }, (_, i) => `(SELECT ${i} AS n, ${body})`).join('\nUNION ALL ');
}
