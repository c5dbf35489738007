// ./ask-host-exit.process.test.ts with every server it starts run as on a Mac and traced (spec/helpers/darwin-mode.ts).
import { enableDarwinMode } from '../helpers/darwin-mode.ts';

await enableDarwinMode();
await import('./ask-host-exit.process.test.ts');
