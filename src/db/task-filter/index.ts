/**
 * TaskFilter (version 2026-12-15): its shape check, its evaluation in memory (a webhook
 * subscription's) and in SQL (search, bulk changes, lists), which agree on every task.
 */
export {
  checkTaskFilter,
  taskFilterIssues,
  InvalidFilterError,
  maxConditions,
  maxDepth,
} from './shape';
export type { TaskFilter } from './shape';
export { compileTaskFilter, taskMatches, TaskReading } from './matches';
export type { TaskPredicate } from './matches';
export {
  hasText,
  labelsOfTask,
  onlyText,
  requiredText,
  whereTaskFilter,
  whereWords,
  wordsOnly,
  type TextLookup,
} from './sql';
export { searchWords } from './words';
