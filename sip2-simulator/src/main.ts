import { runSimulatorCommand } from './command.js';

/** The sip2-simulator command: `npm run simulator -- --port 6001 --control-port 6002` (command.ts runs it). */

const code = await runSimulatorCommand(process.argv.slice(2), 'npm run simulator --');
if (code !== 'running') process.exit(code);
