export * from './api-key';
export * from './api-key.guard';
export * from './api-key.repository';
export * from './auth.module';
export * from './decorators';
export * from './principal';
export * from './site-access.guard';
