import { meterStorage, type StatementCounts, type StorageCounts, type StorageMeter } from './measure-storage.ts';

/** What a metered object reports over RPC. */
export interface ObjectCounts extends StorageCounts {
  databaseSize: number;
  byStatement: StatementCounts;
}

// A mixin's base must be constructible from `any[]` (TS2545); a Durable Object's first argument is its state.
type ObjectClass = abstract new (...args: any[]) => object;

/**
 * A product Durable Object class with its storage metered (see
 * `meterStorage`): the subclass wraps the storage before the product's
 * constructor sees it, and adds `benchCounts()`. The product's code is
 * unchanged; the bench binds the metered class where production binds the
 * original.
 */
export function measured<T extends ObjectClass>(Base: T) {
  abstract class Measured extends Base {
    readonly #meter: StorageMeter;
    readonly #storage: DurableObjectStorage;

    constructor(...args: any[]) {
      const ctx = args[0] as DurableObjectState;
      const meter = meterStorage(ctx.storage);
      super(...args);
      this.#meter = meter;
      this.#storage = ctx.storage;
    }

    benchCounts(): ObjectCounts {
      return { ...this.#meter.read(), databaseSize: this.#storage.sql.databaseSize, byStatement: this.#meter.byStatement() };
    }

    /** The meter itself, for a subclass that adds bench reads of its own (not callable over RPC). */
    protected benchMeter(): StorageMeter {
      return this.#meter;
    }
  }
  return Measured;
}
