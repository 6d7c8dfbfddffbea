import { createServiceClients, runMain, runService } from '@vigil/proto/platform';
import { createModerator } from './app';
import { loadConfig } from './config';

runMain('moderator', async () => {
  const config = loadConfig();
  const clients = createServiceClients('moderator', config);
  await runService(config, clients, () => createModerator({ config, ...clients }));
});
