import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

const DESCRIPTION = `
Read-only API over a web-analytics product: sites, traffic, engagement, realtime activity,
funnels, registered events, conversions and e-commerce. Custom dashboards, scheduled
exports and integrations call it; every endpoint is a \`GET\`.

## Authentication
Every request carries \`Authorization: Bearer <key>\`. Keys start with \`sk_\`; an operator
creates them with the CLI (\`keys:create\`). A key reads exactly the sites its user is a
member of. Site checks run in this order: 401 → 404 → 403 → 400.

## Conventions
- Bodies are \`{"data": …, "meta": …}\`; field names are snake_case.
- Date ranges: \`from\`/\`to\` are \`YYYY-MM-DD\`, inclusive calendar days in the report
  timezone (the site's, or \`timezone\`); default the trailing 30 days; at most 731 days.
  DST days have 23 or 25 hours; half- and quarter-hour zones are exact.
- Rates are percentages 0–100; rates, averages, durations and money are rounded to 2
  decimals; a rate with a zero denominator is 0. Money is summed exactly in decimal.
- Unknown or repeated query parameters are 400. Errors are RFC 9457 problem details
  (\`application/problem+json\`); a 400 lists each offending parameter in \`errors[]\`.
- Every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\`.
- Reports with rows also answer CSV (RFC 4180) with \`Accept: text/csv\` or \`format=csv\`.

## Metric definitions
- **Session**: all hits with the same \`session_id\`; it starts at its first hit. Its
  channel, source, country, device and browser come from its first hit (a missing one reads
  \`(unknown)\`, a missing source \`(direct)\`).
- **Visitors**: distinct \`visitor_id\` over the sessions of the range — an exact count.
- **Bounce**: a session with exactly one hit, and that hit a pageview. Bounce rate =
  bounces / sessions × 100.
- **Entry / exit page**: the path of a session's first / last pageview.
- **Session duration**: last hit − first hit, in seconds.
- **Pages per session**: pageviews of the range's sessions / sessions.
- **Attribution**: sessions, visitors, bounces, durations, conversions and pages per session
  belong to the range containing the session start; pageviews, events, orders and revenue
  to the range containing their own timestamp, taking their session's attributes.
- **Goal**: an event name, or a path pattern (a trailing \`*\` matches a prefix). A session
  **converts** a goal when it has at least one matching hit; conversion rate = converted
  sessions / sessions × 100.
- **Order**: purchases deduplicated by \`order_id\` (the first imported hit wins); revenue is
  summed over orders; average order value = revenue / orders.
- **Returning visitor**: a visitor of the range whose first-ever session started before the
  range (not available on cookieless sites, whose visitor ids rotate daily).
- **Funnel**: per visitor, each step-1 hit in the range starts an attempt; step k+1 is reached
  by a later matching hit within \`window_hours\` of the attempt's start.
`.trim();

const TAGS: Array<[string, string]> = [
  ['sites', 'The sites a key can read'],
  ['analytics', 'Traffic, engagement, realtime and funnel reports'],
  ['events', 'Registered custom events'],
  ['conversions', 'Goals and conversions'],
  ['ecommerce', 'Revenue, orders and products'],
];

/** The OpenAPI document served at /api/docs-json and committed as openapi.json. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Statistics API')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    .setLicense('Proprietary', '/api/docs')
    .addServer('/', 'This server')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key, `sk_…`' });
  for (const [name, description] of TAGS) builder.addTag(name, description);
  return SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (_controllerKey: string, methodKey: string) => methodKey,
  });
}
