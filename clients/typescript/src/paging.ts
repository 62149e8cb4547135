/** Lists as async iterables: item by item, page by page, or into an array of a bounded size. */

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface Paginator<T> extends AsyncIterable<T> {
  /** The pages, each as the service answered it, until `next_cursor` is null. */
  pages(): AsyncIterable<Page<T>>;
  /** Up to `max` items; `max` is required, so a list that grows is never read into memory whole by accident. */
  toArray(options: { max: number }): Promise<T[]>;
}

export function paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
): Paginator<T> {
  async function* pages(): AsyncGenerator<Page<T>> {
    let cursor: string | undefined;
    do {
      const page = await fetchPage(cursor);
      yield page;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }
  async function* items(): AsyncGenerator<T> {
    for await (const page of pages()) yield* page.data;
  }
  return {
    [Symbol.asyncIterator]: items,
    pages,
    async toArray(options) {
      const max = options?.max;
      if (!Number.isSafeInteger(max) || max < 0)
        throw new TypeError('toArray needs { max }: the most items to read, a whole number');
      const collected: T[] = [];
      if (max === 0) return collected;
      for await (const item of items()) {
        collected.push(item);
        if (collected.length >= max) break;
      }
      return collected;
    },
  };
}
