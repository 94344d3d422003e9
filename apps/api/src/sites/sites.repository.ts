import { Site } from '@app/db';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

@Injectable()
export class SitesRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  /** One page of the sites a user is a member of, ordered by id, and the total count. */
  async pageForUser(userId: number, offset: number, limit: number): Promise<[Site[], number]> {
    return this.ds
      .getRepository(Site)
      .createQueryBuilder('s')
      .innerJoin('memberships', 'm', 'm.site_id = s.id AND m.user_id = :userId', { userId })
      .orderBy('s.id', 'ASC')
      .offset(offset)
      .limit(limit)
      .getManyAndCount();
  }
}
