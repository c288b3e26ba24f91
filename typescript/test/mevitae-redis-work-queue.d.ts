/** Types of the npm package @mevitae/redis-work-queue 0.1.5 (redis-work-queue's published Node
 * client, wire generation G1), which ships JavaScript in dist/ without declarations (its "main" is
 * a .ts file that Node cannot load, so it is imported from dist/). Only what the tests call. */
declare module "@mevitae/redis-work-queue/dist/WorkQueue.js" {
  import type { Redis } from "ioredis";

  export class Item {
    constructor(data: string | Buffer, id?: string);
    data: Buffer | string;
    id: string;
  }
  export class KeyPrefix {
    constructor(prefix: string);
  }
  export class WorkQueue {
    constructor(name: KeyPrefix);
    addItem(db: Redis, item: Item): Promise<void>;
    lease(db: Redis, leaseSecs: number, block?: boolean, timeout?: number): Promise<Item | null>;
    complete(db: Redis, item: Item): Promise<boolean>;
    lightClean(db: Redis): Promise<void>;
    queueLen(db: Redis): Promise<number>;
    processing(db: Redis): Promise<number>;
  }
}
