import Database from 'better-sqlite3';
const db = new Database('/tmp/ipscope-demo-release-bcb8c215e6d65d72/releases/20261201T212622Z.sqlite', { readonly: true });
console.log(db.prepare("select i.id, d.id did, d.name, rtype, first_observed fo, last_confirmed lc, ended_at from dns_interval i join domain d on d.id = i.domain_id where value = '104.16.132.229' order by first_observed").all());
console.log(db.prepare("select * from domain where id <= 6").all());
console.log(db.prepare("select * from domain_page where name = 'example.com'").all());
console.log(db.prepare("select runs, truncated from domain_hosting where domain_id = 1").all());
console.log(db.prepare("select id, first_text, last_text, asn, prefixes, source from asn_range where asn = 13335").all());
console.log(db.prepare("select * from ip_summary where value = '104.16.132.229'").all());
