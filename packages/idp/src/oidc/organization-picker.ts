/**
 * The hosted organization picker (docs/organizations.md, "The organization picker"): an app asks
 * for scope `organization` without naming one, and a user of several organizations chooses one
 * after signing in. Server-rendered, no script; its form carries a token bound to the waiting
 * request and the browser's binding cookie, and answers once (oidc/service.ts answerOrganization).
 */
export const ORGANIZATION_PICKER_PATH = '/signin/organization';
