/**
 * A JUnit report of a verification, from Pact's own results: one test suite per consumer and
 * provider, one test case per interaction, its mismatches (or the provider's reason) and what was
 * sent and answered as the failure.
 */
import { exchangesOf, exchangeText } from './exchanges';
import type { PactFile } from './pact-files';
import type { VerificationOutcome } from './verify-pacts';

interface InteractionResult {
  consumer: string;
  provider: string;
  description: string;
  duration?: string;
  result: string;
  mismatch?: { message?: string; mismatches?: { path?: string; mismatch?: string }[] };
}

const xmlEscapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

function escape(text: string): string {
  // Pact colours its text; XML 1.0 has no place for control characters.
  return text
    .replace(/\u001b\[[0-9;]*m/g, '')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/[&<>"']/g, (char) => xmlEscapes[char]);
}

/** Pact's durations read `1s 20ms`, `1.439s` or `915ms`; JUnit wants seconds. */
function seconds(duration = ''): number {
  let total = 0;
  for (const [, value, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m)\b/g))
    total += Number(value) * (unit === 'ms' ? 0.001 : unit === 's' ? 1 : 60);
  return total;
}

function failureText(result: InteractionResult, outcome: VerificationOutcome): string {
  const reasons = outcome.providerFailures
    .filter((failure) => failure.interaction === result.description)
    .map((failure) => failure.reason);
  const lines = [
    ...(result.mismatch?.message ? [result.mismatch.message] : []),
    ...(result.mismatch?.mismatches ?? []).map((mismatch) =>
      mismatch.path ? `${mismatch.path}: ${mismatch.mismatch}` : String(mismatch.mismatch),
    ),
    ...reasons,
    ...exchangesOf(outcome.exchanges, result).flatMap(exchangeText),
  ];
  return lines.join('\n');
}

export function junitReport(pacts: PactFile[], outcome: VerificationOutcome): string {
  const results = (outcome.results.interactionResults ?? []) as InteractionResult[];
  const suites = new Map<string, InteractionResult[]>();
  for (const result of results) {
    const name = `${result.consumer} → ${result.provider}`;
    suites.set(name, [...(suites.get(name) ?? []), result]);
  }
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="verify-pact" tests="${results.length}">`,
  ];
  for (const [name, cases] of suites) {
    const failed = cases.filter((result) => result.result !== 'OK');
    const file = pacts.find((pact) => name === `${pact.consumer} → ${pact.provider}`)?.path ?? '';
    lines.push(
      `  <testsuite name="${escape(name)}" tests="${cases.length}" failures="${failed.length}" file="${escape(file)}">`,
    );
    for (const result of cases) {
      const time = seconds(result.duration).toFixed(3);
      lines.push(
        `    <testcase classname="${escape(name)}" name="${escape(result.description)}" time="${time}">`,
      );
      if (result.result !== 'OK') {
        const text = failureText(result, outcome);
        lines.push(
          `      <failure message="${escape(text.split('\n')[0] ?? '')}">${escape(text)}</failure>`,
        );
      }
      lines.push('    </testcase>');
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}
