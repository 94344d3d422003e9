export * from './date-range';
export * from './definitions';
export * from './parameter-error';
export * from './conversions';
export * from './sql/local-time';
export * from './report-range';
export * from './report-db';
export * from './stats.module';
