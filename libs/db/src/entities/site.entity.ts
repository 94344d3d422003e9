import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const TRACKING_MODES = ['full', 'cookieless'] as const;
export type TrackingMode = (typeof TRACKING_MODES)[number];

@Entity('sites')
export class Site {
  @PrimaryGeneratedColumn({ unsigned: true })
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 255 })
  domain!: string;

  @Column({ type: 'varchar', length: 64 })
  timezone!: string;

  @Column({ type: 'varchar', length: 3 })
  currency!: string;

  @Column({ name: 'tracking_mode', type: 'simple-enum', enum: TRACKING_MODES })
  trackingMode!: TrackingMode;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
