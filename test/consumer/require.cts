// A CommonJS consumer: `require('service-web')` resolves the package's require entry.
import web = require('service-web');

export const status: web.Status = web.Status.OTP_NEEDED;
export const client: web.ServiceClient = new web.ServiceClient();
