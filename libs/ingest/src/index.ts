export * from './hit';
export * from './hit-parser';
export * from './hit-writer';
export * from './importer';
export * from './ingest.module';
export * from './line-reader';
export * from './session-aggregator';
