export * from './api-key';
export * from './api-key.guard';
export * from './access.repository';
export * from './auth.module';
export * from './decorators';
export * from './principal';
export * from './site-access.guard';
export * from './site-id';
