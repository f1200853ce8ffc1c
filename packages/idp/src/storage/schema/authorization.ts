/**
 * Part of Database (../schema.ts): the APIs operators register, their permissions, roles and
 * who holds them. Every table belongs to apis/ (users/store.ts deletes a user's `user_roles`
 * with the user, one of the exceptions schema.ts lists).
 */
export interface AuthorizationTables {
  /** apis/: an API resource; `identifier` is the access token's audience, never changed once made */
  apis: {
    id: string;
    identifier: string;
    name: string;
    /** RFC 7662 4: the client the API's resource server authenticates as to introspect its tokens; null: none. */
    resource_server_client_id: string | null;
    created_at: number;
    updated_at: number;
    /** 1: its access tokens carry the user's roles that grant any of its permissions (`roles`); 0: scope alone. */
    roles_in_token: number;
  };
  /** apis/: the permissions an API defines (scope tokens such as `read:notes`) */
  api_permissions: {
    api_id: string;
    name: string;
  };
  /** apis/: a named set of permissions of one or more APIs */
  roles: {
    id: string;
    name: string;
    created_at: number;
    updated_at: number;
  };
  /** apis/: what a role grants: (API, permission) pairs, each one of that API's permissions */
  role_permissions: {
    role_id: string;
    api_id: string;
    permission: string;
  };
  /** apis/: the roles a user holds */
  user_roles: {
    user_id: string;
    role_id: string;
    created_at: number;
    /** 'cli', an admin key's id, or `operator:<email>`. */
    assigned_by: string;
  };
  /** apis/: what a machine client may do (client_credentials): (API, permission) pairs granted to it directly */
  client_grants: {
    client_id: string;
    api_id: string;
    permission: string;
  };
}
