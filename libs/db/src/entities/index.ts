import { ApiKey } from './api-key.entity';
import { Goal } from './goal.entity';
import { Membership } from './membership.entity';
import { RegisteredEvent } from './registered-event.entity';
import { Site } from './site.entity';
import { User } from './user.entity';

export * from './api-key.entity';
export * from './goal.entity';
export * from './membership.entity';
export * from './registered-event.entity';
export * from './site.entity';
export * from './user.entity';

/** Entities mapped through repositories; hits and derived tables are read with SQL query modules. */
export const ENTITIES = [User, Site, Membership, ApiKey, RegisteredEvent, Goal];
