import { InitialSchema1763800000000 } from './1763800000000-initial-schema';

export const MIGRATIONS = [InitialSchema1763800000000];
