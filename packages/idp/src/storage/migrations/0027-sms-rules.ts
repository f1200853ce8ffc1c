import type { Kysely, Migration } from 'kysely';

/** Per-application send rules (issue 41): the countries its SMS may go to, the mail domains its codes may go to. */
export const migrations0027: Record<string, Migration> = {};

// Both JSON arrays, null when the operator set none: an application without its own country
// list follows SERVICE_IDP_SMS_COUNTRIES, one without mail domains mails any domain.
migrations0027['0027_sms_rules'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('clients').addColumn('sms_countries', 'text').execute();
    await db.schema.alterTable('clients').addColumn('mail_domains', 'text').execute();
  },
};
