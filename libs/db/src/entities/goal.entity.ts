import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const GOAL_TYPES = ['event', 'path'] as const;
export type GoalType = (typeof GOAL_TYPES)[number];

@Entity('goals')
export class Goal {
  @PrimaryGeneratedColumn({ unsigned: true })
  id!: number;

  @Column({ name: 'site_id', type: 'int', unsigned: true })
  siteId!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'simple-enum', enum: GOAL_TYPES })
  type!: GoalType;

  /** An event name, or a path pattern (a trailing `*` matches a prefix). */
  @Column({ name: 'match_value', type: 'varchar', length: 2048 })
  matchValue!: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
