export * from './date-range';
export * from './definitions';
