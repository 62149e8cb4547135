/**
 * Counting the instructions a service runs for a number of requests, with valgrind's callgrind:
 * unlike CPU time, a count does not move when the machine is busy or its clock changes speed,
 * so a few per cent between two builds can be told apart. The service starts with counting off
 * (start-up and warm-up run at valgrind's lighter pace) and `count` turns it on around a load.
 *
 * Each count is split by what ran: V8's garbage collector, its compilers, and everything else
 * (the service's own work, its libraries, Node and the database driver). Collections and
 * compilations come in lumps (a major collection is a tenth of a round's count), so a figure per
 * request takes them over every round together, and the rest round by round.
 *
 * What a service does by the clock whatever its load (polling the feed, keys and the delivery
 * queue) is counted too, and valgrind stretches a round fifty times: at full speed a few hundred
 * instructions a request, it is a tenth of a counted one. So a bench counts the service idle as
 * well, and takes that rate times a round's length off the round.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from './processes';

export interface Instructions {
  /** V8's garbage collection, in whichever thread it ran. */
  collecting: number;
  /** Of `collecting`, what is not the scavenger's: major collections' marking, sweeping and compaction. */
  majorCollecting: number;
  /** V8's parsers and compilers (Ignition's bytecode, Sparkplug, Maglev, TurboFan). */
  compiling: number;
  /** Everything else. */
  running: number;
  /** How long the count ran, in seconds of the wall clock. */
  seconds: number;
}

/**
 * The collector's functions by name. The second line names what the collector alone calls though
 * its name does not say so (found by callgrind_annotate --tree=caller): pages accounted as they are
 * swept (heap::base::ActiveSystemPages, counting bits by libgcc's __popcountdi2), pointers updated
 * after a compaction, roots visited in the serializer's caches and in compiled code. Left out of
 * it, a major collection's share of these (16 k instructions a delivery) fell in the rest of
 * whichever round it ran in.
 */
const collector = new RegExp(
  [
    /v8::internal::(?:[A-Za-z]*Marking|[A-Za-z]*Sweep|Scavenge|MarkCompact|Evacuat|Heap::|Heap[A-Z]|MinorMC|Marker|Worklist|RememberedSet|SlotSet|MemoryAllocator|MemoryChunk|LiveObject|PagedSpace|FreeList|ConcurrentMarking|.*Visitor|.*Compactor|.*Collector|GCTracer|InternalizedStringTableCleaner|.*Sweeper)/
      .source,
    /heap::base::|UpdatingItem|IterateObjectCache|RelocIterator|ObjectVisitor|__popcountdi2/.source,
  ].join('|'),
);
/** The scavenger's own functions: the rest of the collector's work is major collections'. */
const scavenger = /Scaveng|SemiSpace|NewSpace/;
const compiler =
  /v8::internal::(?:compiler::|maglev::|baseline::|interpreter::|Parser|ParserBase|PreParser|Scanner|Compiler::|.*CodeGenerator|wasm::|Assembler|.*Assembler::|RegExpCompiler|RegExpMacroAssembler)/;

/** The calls of one function's own instructions in `callgrind_annotate`'s listing: `1,234 (0.5%)  file:function [object]`. */
const listed = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/;

function readDump(file: string): Instructions {
  const annotated = spawnSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', file], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (annotated.status !== 0) throw new Error(`callgrind_annotate ${file}: ${annotated.stderr}`);
  const counted: Instructions = {
    collecting: 0,
    majorCollecting: 0,
    compiling: 0,
    running: 0,
    seconds: 0,
  };
  for (const line of annotated.stdout.split('\n')) {
    const match = listed.exec(line);
    if (match === null || match[2].includes('PROGRAM TOTALS')) continue;
    const instructions = Number(match[1].replace(/,/g, ''));
    const where = match[2];
    // The compilers first: their graph visitors (compiler::…Visitor) are not the collector's.
    if (compiler.test(where)) counted.compiling += instructions;
    else if (collector.test(where)) {
      counted.collecting += instructions;
      if (!scavenger.test(where)) counted.majorCollecting += instructions;
    } else counted.running += instructions;
  }
  return counted;
}

export interface CountedServer {
  server: ServerProcess;
  /** Runs `load` with counting on, and gives what the service ran meanwhile. */
  count(load: () => Promise<unknown>): Promise<Instructions>;
}

/** The service (`node ...nodeArguments`) under callgrind, counting off until `count` is called. */
export async function startCountedServer(
  nodeArguments: string[],
  env: Record<string, string>,
): Promise<CountedServer> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-callgrind-'));
  // vgdb names its pipes after HOST and USER as valgrind saw them: callgrind_control needs the same.
  const controlEnv = { ...process.env, HOST: '127.0.0.1', USER: 'bench', LOGNAME: 'bench' };
  const server = await startServerProcess(nodeArguments, env, {
    wrap: [
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      '--dump-line=no',
      `--log-file=${path.join(folder, 'valgrind.log')}`,
      `--callgrind-out-file=${path.join(folder, 'out')}`,
    ],
    env: {
      USER: 'bench',
      LOGNAME: 'bench',
      // The service's own time limits are set for a request at full speed, not at valgrind's.
      HEADERS_TIMEOUT_SECONDS: '600',
      REQUEST_TIMEOUT_SECONDS: '600',
      KEEP_ALIVE_TIMEOUT_SECONDS: '600',
      DATABASE_STATEMENT_TIMEOUT_SECONDS: '600',
    },
    readyWithinMs: 300_000,
  });
  let dumps = 0;
  const control = (...args: string[]) => {
    const result = spawnSync('callgrind_control', [...args, String(server.pid)], {
      env: controlEnv,
      encoding: 'utf8',
    });
    if (result.status !== 0)
      throw new Error(`callgrind_control ${args.join(' ')}: ${result.stderr}`);
  };
  return {
    server,
    async count(load) {
      control('--instr=on');
      control('--zero');
      const started = performance.now();
      await load();
      const seconds = (performance.now() - started) / 1000;
      control(`--dump=round${++dumps}`);
      control('--instr=off');
      const file = path.join(folder, `out.${dumps}`);
      const counted = { ...readDump(file), seconds };
      fs.rmSync(file);
      return counted;
    },
  };
}
