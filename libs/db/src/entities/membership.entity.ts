import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('memberships')
export class Membership {
  @PrimaryColumn({ name: 'site_id', type: 'int', unsigned: true })
  siteId!: number;

  @PrimaryColumn({ name: 'user_id', type: 'int', unsigned: true })
  userId!: number;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
