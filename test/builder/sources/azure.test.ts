import t from 'tap';
import { azureCategory, source } from '../../../builder/sources/azure.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('azure', 'ServiceTags_Public.json');

t.test('excerpt: one record per (service tag, prefix); Front Door is cdn', async (t) => {
  const result = source.parse(text, 'ServiceTags_Public.json');
  t.equal(result.read, 14);
  t.equal(result.records.length, 14);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, undefined, 'the file carries only a changeNumber');
  t.strictSame(result.records[0], {
    prefix: '4.145.74.52/30',
    provider: 'Microsoft Azure',
    category: 'cloud',
    metadata: { service: 'ActionGroup' },
  });
  t.strictSame(result.records[3], {
    prefix: '2603:1000:4::10c/126',
    provider: 'Microsoft Azure',
    category: 'cloud',
    metadata: { service: 'ActionGroup' },
  });
  t.strictSame(result.records[4], {
    prefix: '13.68.163.32/28',
    provider: 'Microsoft Azure',
    category: 'cloud',
    metadata: { service: 'Storage.EastUS', region: 'eastus' },
  });
  t.strictSame(result.records[7], {
    prefix: '4.145.22.160/29',
    provider: 'Microsoft Azure',
    category: 'cdn',
    metadata: { service: 'AzureFrontDoor.Frontend' },
  });
  t.strictSame(result.records[11], {
    prefix: '2603:1000:4::600/123',
    provider: 'Microsoft Azure',
    category: 'cdn',
    metadata: { service: 'AzureFrontDoor.Backend' },
  });
  t.strictSame(result.records[12], {
    prefix: '4.156.0.0/15',
    provider: 'Microsoft Azure',
    category: 'cloud',
    metadata: { service: 'AzureCloud.eastus', region: 'eastus' },
  });
  t.equal(result.records.filter((record) => record.category === 'cdn').length, 5);
});

t.test('category mapping', async (t) => {
  t.equal(azureCategory('AzureFrontDoor.Frontend'), 'cdn');
  t.equal(azureCategory('AzureFrontDoor.FirstParty'), 'cdn');
  t.equal(azureCategory('AzureCloud'), 'cloud');
  t.equal(azureCategory('CognitiveServicesFrontend'), 'cloud');
});

t.test('a broken copy: bad prefixes rejected at their line', async (t) => {
  let broken = breakText(text, '"4.149.254.68/30"', '"4.149.254.68/3O"'); // line 16
  broken = breakText(broken, '"4.227.128.0/17"', '"4.227.128.1/17"'); // host bits: normalised
  const result = source.parse(broken, 'ServiceTags_Public.json');
  t.equal(result.read, 14);
  t.strictSame(result.rejected, [
    { line: 16, reason: 'expected a CIDR (address/length) in addressPrefixes, got "4.149.254.68/3O"' },
  ]);
  t.equal(result.records[12]?.prefix, '4.227.128.0/17');
});

t.test('wrong shape is refused as a whole', async (t) => {
  t.throws(() => source.parse('{"values": [{"name": "X"}]}', 'ServiceTags_Public.json'), {
    message: /^ServiceTags_Public\.json: not in the Azure Service Tags shape: values\.0\.properties: /,
  });
});
