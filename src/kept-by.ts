/**
 * A function whose answers are kept by their argument, at most `most` of them: past that, all are
 * let go and made again as they are asked for. For what is kept only to save work (label folds,
 * decoded keys, subscriptions, parsed URLs), where a bound matters and which entries stay does not.
 */
export function keptBy<K, V>(most: number, make: (key: K) => V): (key: K) => V {
  const kept = new Map<K, V>();
  return (key) => {
    let value = kept.get(key);
    if (value === undefined) {
      if (kept.size >= most) kept.clear();
      value = make(key);
      kept.set(key, value);
    }
    return value;
  };
}
