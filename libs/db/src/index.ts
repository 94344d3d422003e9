export * from './admin';
export * from './data-source-options';
export * from './database.module';
export * from './dialect';
export * from './entities';
export * from './migrations';
