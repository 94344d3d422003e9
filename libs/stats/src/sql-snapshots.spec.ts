import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { renderSnapshots, SNAPSHOT_ROOT } from '../../../scripts/sql-snapshots';

function committedFiles(dir = SNAPSHOT_ROOT, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? committedFiles(path.join(dir, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

describe('SQL snapshots (sql/)', () => {
  const rendered = renderSnapshots();

  it('has one committed file per report statement and no other', () => {
    expect(committedFiles().sort()).toEqual([...rendered.keys()].sort());
  });

  it.each([...rendered.entries()])(
    '%s matches the SQL the code generates (npm run sql:sync rewrites it)',
    (file, text) => {
      const committed = path.join(SNAPSHOT_ROOT, file);
      expect(existsSync(committed) ? readFileSync(committed, 'utf8') : '(missing)').toBe(text);
    },
  );
});
