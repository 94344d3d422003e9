export * from './admin';
export * from './data-source-options';
export * from './api-account';
export * from './database-monitor';
export * from './database.module';
export * from './dialect';
export * from './entities';
export * from './migrations';
