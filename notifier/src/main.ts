import { createServiceClients, runMain, runService } from '@vigil/proto/platform';
import { createNotifier } from './app';
import { loadConfig } from './config';

runMain('notifier', async () => {
  const config = loadConfig();
  const clients = createServiceClients('notifier', config);
  await runService(config, clients, () => createNotifier({ config, ...clients }));
});
