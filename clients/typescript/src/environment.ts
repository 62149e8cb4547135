/**
 * The environment variables the kit reads when a program does not give their values: in Node only
 * (a browser has no `process`), and an empty one counts as unset, as in a shell's `${VAR:-…}`.
 */

// What the kit's `process` may be: Node's, or none in a browser (the kit compiles without Node's types).
declare const process: { env?: Record<string, string | undefined> } | undefined;

/** Whether the kit runs where environment variables exist (Node). */
export function hasEnvironment(): boolean {
  return typeof process !== 'undefined' && process?.env !== undefined;
}

/** The value of `name` in Node's environment, or undefined (unset, empty, or not in Node). */
export function environmentVariable(name: string): string | undefined {
  const value = hasEnvironment() ? process!.env![name] : undefined;
  return value === '' ? undefined : value;
}
