import 'reflect-metadata';
import { loadConfig } from './libs/config/src';
import { dataSourceOptions } from './libs/db/src/data-source-options';
import { DataSource } from 'typeorm';

/** The DataSource the TypeORM CLI uses (`npm run migration:run`); the admin connection. */
export default new DataSource(dataSourceOptions(loadConfig().database));
