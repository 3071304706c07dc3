/**
 * Mail-to-fax profiles (/outbound/profiles): a page of them (the API's limit/offset), each
 * with how many users have it; a form to create one or change its settings groups, which
 * shows what an empty field inherits from the customer.
 */
import { useEffect, useState } from "preact/hooks";
import type { FaxlineConfiguration, OutboundProfile, OutboundProfileChange } from "@faxline/client/configuration";
import { messageOf } from "../../config-api.ts";
import { t } from "../../i18n.ts";
import { ConfigForm, DeleteButton, OutcomeLine, Pager, useSectionHeading, type Outcome } from "./form-kit.tsx";
import { SettingsGroups } from "./settings-groups.tsx";
import { formOf, groupsOf, inheritedOf, SETTINGS_PATHS, type FormValues } from "./settings-fields.ts";

const PAGE = 20;

function ProfileForm({ api, profile, onDone }: { api: FaxlineConfiguration; profile: OutboundProfile | null; onDone: (saved: string | null) => void }) {
  const [name, setName] = useState(profile?.name ?? "");
  const [values, setValues] = useState<FormValues>(profile ? formOf(profile as Record<string, unknown>) : formOf({}));
  const [inherited, setInherited] = useState<Record<string, unknown> | null>(null);
  useEffect(() => {
    api.getOutboundSettings({ inherit: true }).then((s) => setInherited(inheritedOf(s as Record<string, unknown>)), () => setInherited(null));
  }, []);
  return (
    <ConfigForm
      id="m2f-profile-form"
      title={profile ? t("m2f.profiles.editTitle", { name: profile.name }) : t("m2f.profiles.newTitle")}
      fields={["name", ...SETTINGS_PATHS]}
      keyField="name"
      onCancel={() => onDone(null)}
      onSubmit={async () => {
        const saved = await api.putOutboundProfile(name.trim(), groupsOf(values) as OutboundProfileChange);
        onDone(saved.name);
      }}
    >
      {(field) => (
        <>
          {profile ? null : (
            <label>
              {t("m2f.profiles.name")}
              <input {...field("name", "m2f-profile-name-hint")} value={name} maxLength={64} autoComplete="off" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
              <span id="m2f-profile-name-hint" class="muted small">
                {t("m2f.profiles.nameHint")}
              </span>
            </label>
          )}
          <SettingsGroups formId="m2f-profile-form" values={values} set={(p, v) => setValues({ ...values, [p]: v })} inherited={inherited} field={field} />
        </>
      )}
    </ConfigForm>
  );
}

export function ProfilesSection({ api, version, changed }: { api: FaxlineConfiguration; version: number; changed: () => void }) {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<{ items: OutboundProfile[]; hasMore: boolean } | null>(null);
  const [editing, setEditing] = useState<OutboundProfile | "new" | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const heading = useSectionHeading();

  const load = async (at = offset) => {
    try {
      const items = await api.listOutboundProfiles({ limit: PAGE + 1, offset: at });
      setPage({ items: items.slice(0, PAGE), hasMore: items.length > PAGE });
    } catch (err) {
      setOutcome({ tone: "error", text: t("m2f.loadFailed", { message: messageOf(err) }) });
    }
  };
  useEffect(() => void load(), [api, offset, version]);

  return (
    <section class="card" aria-labelledby="m2f-profiles" data-section="profiles">
      <div class="card-head">
        <h2 id="m2f-profiles" tabIndex={-1} ref={heading.ref}>{t("m2f.profiles.title")}</h2>
        <button type="button" class="button-primary" disabled={editing !== null} onClick={() => setEditing("new")}>
          {t("m2f.profiles.new")}
        </button>
      </div>
      <p class="muted small">{t("m2f.profiles.intro")}</p>
      {page === null ? null : page.items.length === 0 ? (
        <p class="empty">{t("m2f.profiles.none")}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t("m2f.profiles.name")}</th>
              <th scope="col" class="num">{t("m2f.profiles.users")}</th>
              <th scope="col">
                <span class="visually-hidden">{t("m2f.edit")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((p) => (
              <tr data-profile={p.name}>
                <td class="mono">{p.name}</td>
                <td class="num">{p.users}</td>
                <td>
                  <button type="button" class="button-quiet" aria-label={`${t("m2f.edit")} ${p.name}`} onClick={() => setEditing(p)}>
                    {t("m2f.edit")}
                  </button>{" "}
                  <DeleteButton
                    name={p.name}
                    onDelete={async () => {
                      try {
                        await api.deleteOutboundProfile(p.name);
                        setOutcome({ tone: "success", text: t("m2f.deleted", { name: p.name }) });
                        if (editing !== null && editing !== "new" && editing.name === p.name) setEditing(null);
                        changed();
                      } catch (err) {
                        setOutcome({ tone: "error", text: messageOf(err) });
                      }
                      heading.focus();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page ? <Pager label={t("m2f.profiles.title")} offset={offset} count={page.items.length} limit={PAGE} hasMore={page.hasMore} onPage={setOffset} /> : null}
      {editing === null ? null : (
        <ProfileForm
          key={editing === "new" ? "" : editing.name}
          api={api}
          profile={editing === "new" ? null : editing}
          onDone={(saved) => {
            setEditing(null);
            heading.focus();
            if (saved !== null) {
              setOutcome({ tone: "success", text: t("m2f.saved", { name: saved }) });
              changed();
            }
          }}
        />
      )}
      <OutcomeLine outcome={outcome} />
    </section>
  );
}
