import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('registered_events')
export class RegisteredEvent {
  @PrimaryGeneratedColumn({ unsigned: true })
  id!: number;

  @Column({ name: 'site_id', type: 'int', unsigned: true })
  siteId!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  description!: string | null;

  @Column({ name: 'registered_at', type: 'datetime', precision: 3 })
  registeredAt!: Date;
}
