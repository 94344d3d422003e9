const MAX_SITE_ID = 4_294_967_295;

/** Parses a path `{id}`: decimal digits only, within the id column's range. */
export function parseSiteId(raw: unknown): number | undefined {
  if (typeof raw !== 'string' || !/^[1-9]\d{0,9}$/.test(raw)) return undefined;
  const id = Number(raw);
  return id <= MAX_SITE_ID ? id : undefined;
}
